"Training (notebooks 06-08): schedules, the distributed runtime, the engines (torch DDP, DeepSpeed, FSDP2), the trainer and the tasks it runs."
