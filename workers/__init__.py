"""The flywheel: turns engine snapshots into store blocks and back, and (in later issues) the Celery tasks,
the sandbox, the router and the confidence gates. Depends on engine/ and store/."""
