"""The learning algorithms: PPO (:mod:`.ppo`), DMC (:mod:`.dmc`), expert iteration
(:mod:`.expert_iteration`), the warm starts they share (:mod:`.warmstart`, behaviour cloning in
:mod:`.imitation`), and score tuning of a trained network (:mod:`.score_tuning`)."""
