func.func @b() { return }
// -----
"crash-here"() : () -> ()
