"Data (notebooks 03-05): text sources, generated stories, corpora of the causal LM and their token blocks, pair sources, CARP's pairs and their mixing."
