package discord

// WaitIdle waits until the work the client was handed (messages and
// interactions it received) is done: a test asserts what did not happen
// after it (with discordtest's Flush first), instead of sleeping.
func (c *Client) WaitIdle() { c.inflight.Wait() }
