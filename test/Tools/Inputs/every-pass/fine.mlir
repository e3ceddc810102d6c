func.func @a() { return }
