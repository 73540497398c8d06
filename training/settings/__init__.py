"""The YAML configs: their reader (:mod:`.yaml_loader`), the section base (:mod:`.config_base`),
the training config (:mod:`.config`) and its improvement sections (:mod:`.improvement_config`)."""
