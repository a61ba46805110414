def predict(xs):  # the organizers' example: y = 2x
    return [2 * x for x in xs]
