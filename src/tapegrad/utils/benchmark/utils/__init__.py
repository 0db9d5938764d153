"""The parts of ``tapegrad.utils.benchmark``, at torch's module paths (``common``, ``timer``, ``compare``)."""
