"Linguistic collapse (notebooks 20-23): causal LMs, the collection of their per-class statistics, the analysis into the paper's columns, and any Hugging Face causal LM."
