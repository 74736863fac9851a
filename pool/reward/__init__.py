"""The pool as a reward signal: the pairwise judge, the ladder, preference scores.

judge           the env's pairwise VLM judge (both orders, ties 0.5), stored verdicts;
                judge_config builds one from the models file, judge_heuristic is the offline one
verdict         reading a verdict from a reply (JSON, a tool call, [[A]], boxed, two scores...)
judge_reasons   why a call gave no verdict (failed, refused, reasoning only...) and what to do
judge_agreement how often the judge agrees with the curators
ladder          calibration: ceiling / rung / free win, by the policy's win rate
scorer          preference scorers (HPSv3)
view            the ladder, agreement and scores as the card and report show them
"""
