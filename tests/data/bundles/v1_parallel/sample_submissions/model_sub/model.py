def predict(x):
    return 2 * x
