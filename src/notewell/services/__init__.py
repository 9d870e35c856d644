"""Services layer: the store API every interface calls."""
