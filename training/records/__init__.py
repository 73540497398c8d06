"""What a training run leaves: its folder, checkpoints and RNG states (:mod:`.runs`), its
progress log (:mod:`.runlog`) and the learning curves drawn from it (:mod:`.plot`)."""
