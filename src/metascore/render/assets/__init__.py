"""The ranking page's static scripts, which :mod:`metascore.render.reweight` inlines:
``reweight_methods.js`` (the ranking methods the page recomputes, as the registry computes
them) and ``reweight.js`` (the re-weighting panel)."""
