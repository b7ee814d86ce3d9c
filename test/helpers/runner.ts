// Tests that hold their thread for long stretches. vitest's worker talks to its runner over an RPC whose calls
// time out after 60 s (fixed in vitest 3, no setting), and Node runs expired timers before it reads a socket: a
// file that keeps its thread for more than a minute without going back to the event loop fails the whole run
// ("Timeout calling onTaskUpdate"), every test passed. onnxruntime-node loads, optimises and runs a model on the
// calling thread, seconds each and three times that while the suite's other files share the two cores, and an
// `await` of such a call goes on without returning to the loop. So those tests let the runner in between.

/** Back to the event loop once (its poll phase reads the runner's answers) before the next long step. */
export const letTheRunnerIn = () => new Promise<void>((resolve) => setImmediate(resolve));
