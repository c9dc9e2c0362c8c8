"The geometry of class-labelled representations (notebook 09): per-class statistics in one streaming pass and the collapse measures NC1-NC5, shared by both workflows."
