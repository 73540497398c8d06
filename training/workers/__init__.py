"""Where the work runs: thread limits for torch and numba (:mod:`.threads`), the local worker
pool (:mod:`.worker_pool`) and the backends that hand jobs to it or to Ray (:mod:`.distributed`)."""
