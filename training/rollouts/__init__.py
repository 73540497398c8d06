"""The games learners collect: PPO's self-play rollouts and snapshot pool (:mod:`.selfplay`) and
expert iteration's search targets (:mod:`.exit_data`)."""
