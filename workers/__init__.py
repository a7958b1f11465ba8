"""Everything that runs the flywheel and the serving engine: solving, verifying in the sandbox, depositing and
answering (flywheel/, verify/), the Celery tasks and their bodies (queue/), operator jobs over stored blocks
(upkeep/), OpenAI-compatible serving (serving/), and the shared runtime, settings and seams. The only room that
knows both engine/ and store/."""
