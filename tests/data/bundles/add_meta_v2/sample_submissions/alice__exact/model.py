def predict(xs):
    return [2 * x + 1 for x in xs]
