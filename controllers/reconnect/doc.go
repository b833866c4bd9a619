// Package reconnect makes controllers catch up within about a second of an API server
// answering again after an outage, instead of after the minute that client-go's and the
// work queues' exponential backoffs add up to.
//
// A Recovery wraps the informers of a cache so that a list or watch that fails because the
// server cannot be reached is retried at most MaxDelay apart, and gives controllers work
// queues whose items waiting out a failure are retried at once when any of its informers
// reaches its server again. A server that has just started refuses requests as forbidden
// until its authorizer's caches are filled: such refusals are retried the same way for a
// while, and only then returned. Config shortens the wait that a starting or stopping API server
// asks of its clients (five seconds) to MaxDelay.
package reconnect
