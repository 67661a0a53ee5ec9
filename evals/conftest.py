# The bundled instances are data (their repos hold their own tests), not tests of this suite.
collect_ignore = ["instances"]
