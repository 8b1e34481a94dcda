"""What front ends and plugins do to a running session from outside it: RPC/interactive commands
(SessionControl), session-file operations (SessionFiles), the user's own shell commands, statistics."""
