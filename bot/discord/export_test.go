package discord

// WaitIdle waits until the events the client took are handled (and the
// work their acknowledgements handed on): a test asserts what did not
// happen after it, instead of sleeping.
func (c *Client) WaitIdle() {
	c.acks.Wait()
	c.work.Wait()
}
