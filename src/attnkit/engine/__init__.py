"""Corpus-scale jobs on Ray Data (``attnkit translate | align | evaluate --engine ray``).

The input is cut into shards of ``--shard-size`` items; a pool of Ray actors, each holding the model(s)
once, turns shards into outputs (``work``: exactly what one process would print, item by item); the
driver writes each finished shard to the job's folder and joins them in input order (``folder``). A
shard whose worker died is retried on a restarted actor; ``--resume`` skips the shards already in the
folder. Ray is an extra (``attnkit[ray]``) imported by ``ray_jobs`` only, when a job asks for it.
"""
