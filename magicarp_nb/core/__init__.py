"The shared foundation (notebooks 00-02): typed settings and configs, command options, the runtime, run folders, checkpoints, run names and statistics files."
