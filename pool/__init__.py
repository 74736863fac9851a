"""Stage 4: rated candidates -> a released, versioned reference pool, its report and dataset.

catalog      PoolEntry (candidate + photo + final tier) and the one eligibility rule
similarity/  near-duplicate measurement: features, distance, threshold
reward/      the judge, the ladder and preference scores
selection/   the draft and its versions
diversity/   the diversity report and its metrics
dataset/     export, card, publishing, the env's sampler
studio/      the studio's Pool tab;  cli, cli_reward: `refpool pool|report|export|publish|score`
"""
