def predict(xs):
    return [-x for x in xs]
