"""Beyond one machine: ``cluster`` (multi-worker set-up, the public
``gac.cluster``), ``tf1_collectives`` (TF 1.x collective strategies) and
``diagnostics`` (counting all-reduces)."""
