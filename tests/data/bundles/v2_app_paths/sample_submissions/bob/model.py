class Model:
    """Always predicts 1."""

    def fit(self, x, y):
        pass

    def predict(self, x):
        return [1 for _ in x]
