def predict(xs):
    return [10.0 for _ in xs]
