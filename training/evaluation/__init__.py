"""Evaluation: duplicate matches (:mod:`.evaluate`), their plays (:mod:`.matches`), the ranges
workers play (:mod:`.evaluate_ranges`), confidence intervals (:mod:`.statistics`) and a
training run's evaluation of its policy (:mod:`.policy_evaluation`)."""
