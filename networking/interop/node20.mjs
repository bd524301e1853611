// Node 20 lacks `Promise.withResolvers` (ES2024, Node 22+), which it-queue (under libp2p's peer
// store, through mortice) calls. Every released it-queue version uses it, so instead of pinning
// around it this module, imported before anything else by peer.mjs, supplies the standard
// behaviour when the runtime does not.
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers () {
      let resolve
      let reject
      const promise = new this((res, rej) => {
        resolve = res
        reject = rej
      })
      return { promise, resolve, reject }
    }
  })
}
