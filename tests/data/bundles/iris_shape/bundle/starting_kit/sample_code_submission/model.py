"""The example model: predicts the most frequent training label for every row."""


class model:
    def fit(self, rows, labels):
        self.label = max(sorted(set(labels)), key=labels.count)

    def predict(self, rows):
        return [self.label for _ in rows]
