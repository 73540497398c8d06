"""Training of learning agents against the Five Hundred environment, driven by YAML configs."""
