class Model:
    """Predicts 1 above the midpoint of the two class means."""

    def fit(self, x, y):
        ones = [a for a, b in zip(x, y) if b == 1]
        zeros = [a for a, b in zip(x, y) if b == 0]
        self.cut = (sum(ones) / len(ones) + sum(zeros) / len(zeros)) / 2

    def predict(self, x):
        return [int(a > self.cut) for a in x]
