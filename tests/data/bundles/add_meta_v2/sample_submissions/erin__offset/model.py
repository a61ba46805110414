def predict(xs):
    return [2 * x + 1.5 for x in xs]
