"""Least squares everywhere: one-vs-rest regression for classes, clipped for probabilities,
with squared features for the regression task."""

import numpy as np


def design(X, squares):
    cols = [X, np.ones((len(X), 1))] + ([X ** 2] if squares else [])
    return np.column_stack(cols)


class Model:
    def fit(self, X, y, task_type):
        self.task_type = task_type
        self.squares = task_type == "regression"
        A = design(X, self.squares)
        if task_type == "classification":
            self.classes = np.unique(y)
            target = (y[:, None] == self.classes[None, :]).astype(float)
        else:
            target = y.astype(float)
        self.coef = np.linalg.lstsq(A, target, rcond=None)[0]

    def predict(self, X):
        p = design(X, self.squares) @ self.coef
        if self.task_type == "classification":
            return self.classes[np.argmax(p, axis=1)]
        return np.clip(p, 0.01, 0.99) if self.task_type == "probability" else p
