"""Generation: photo analysis, coder clients, critics, the 3-round refinement loop, batch runs."""
