// The kinds of background shell the process specs mix, in and out of the shell's process group.
/**
 * The kinds of background shell the process tests mix. Each keeps running until killed (30 s
 * is only a backstop). The last two leave the shell's group (setsid): only the shell's
 * environment marker (DSH_BG_SHELL) reaches them.
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
  /** A setsid child outside the group, beside a leader that waits. */
  setsid: "echo setsid; setsid bash -c 'sleep 30' & sleep 30",
  /** A setsid'd, double-forked TERM-ignoring daemon, and a leader that exits at once. */
  daemon: "( setsid bash -c \"( trap '' TERM; sleep 30 ) &\" & ) ; exit 0",
} as const
