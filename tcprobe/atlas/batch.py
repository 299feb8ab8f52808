def batch_invariance(*a, **k):
    raise NotImplementedError
