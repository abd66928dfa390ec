package slack

// WaitIdle waits until the work the client was handed (events and button
// presses it acknowledged) is done: a test asserts what did not happen
// after it, instead of sleeping.
func (c *Client) WaitIdle() { c.intake.Wait() }
