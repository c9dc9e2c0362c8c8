"CARP (notebooks 10-19): encoders, objectives, the exact microbatched step, towers, training, evaluation, mining and export of passage-review bi-encoders."
