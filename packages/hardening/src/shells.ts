/**
 * The kinds of background shell the process tests mix. Each keeps running until killed (30 s
 * is only a backstop); none uses setsid, so every process stays in the shell's group.
 */
export const SHELL_KINDS = {
  /** Dies on SIGTERM. */
  honour: 'echo honour; sleep 30',
  /** Ignores SIGTERM (the sleep inherits the ignored disposition): needs the SIGKILL escalation. */
  ignore: "echo ignore; trap '' TERM; sleep 30",
  /** Two children and a waiting leader. */
  fork: 'echo fork; sleep 30 & sleep 30 & wait',
  /** A grandchild re-parented away from the shell (double fork, no setsid), and a leader that outlives nothing. */
  doubleFork: 'echo doubleFork; ( (sleep 30 &) & ); sleep 30',
  /** A double-forked TERM-ignorer whose leader exits at once: the group lives on without its leader. */
  orphanIgnore: "( (trap '' TERM; sleep 30) & ) ; exit 0",
} as const
