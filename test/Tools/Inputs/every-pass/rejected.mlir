"bad-input"() : () -> ()
