// Package class runs an instructor's live class on a LAN: learners join a server on the instructor's machine
// with a one-time class token, their `lab check` results are posted to it, and a scoreboard page shows every
// learner's progress live. Results live on disk so a restarted server loses nothing.
package class
