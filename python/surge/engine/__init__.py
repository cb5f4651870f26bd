"""surge.engine: the only importer of ``surge._engine``: run a plan, validate one, the result it returns."""
