"""What users run beside training: ``verification`` (``gac.verify``),
``demo``, ``info`` (``gac.show_versions``) and ``testing`` (the runner
behind verify, the pytest plugin and the project's tests)."""
