"""The `cardarena` command line and the glue that wires the parts together.

`games/`, `server/`, `worker/` and `sdk/` are the platform; this package only
starts them: the embedded Redis, the subcommands, the demo.
"""
