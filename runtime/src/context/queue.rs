//! A request's outbound queue: bounded, any number of senders, one receiver.
//!
//! Every HTTP request gets one (its progress and log notifications, and a listen
//! subscription's events, travel on it), and most never carry a message. A tokio `mpsc`
//! channel allocates about 2.3 KB up front (cache-padded state plus a block of 32 slots), which
//! made it the second-largest part of an idle subscription and an allocation on every request.
//! This queue is one small allocation; its buffer grows only when messages arrive.
//!
//! Semantics follow tokio's bounded `mpsc` where callers can see it: `send` waits while
//! `capacity` items are queued and fails once the receiver is gone; `recv` yields `None` once
//! every sender is gone and the queue is empty. Unlike tokio, taking an item wakes every
//! waiting sender (not one, in order) and a waiting sender's waker stays listed until the next
//! item is taken: a request has one or a few senders, so neither costs anything that matters.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

struct State<T> {
    items: VecDeque<T>,
    capacity: usize,
    receiver_alive: bool,
    receiver: Option<Waker>,
    /// Senders waiting for room; all are woken when an item is taken.
    waiting: Vec<Waker>,
}

struct Queue<T> {
    state: Mutex<State<T>>,
    /// Live senders. Counted outside the lock: every request clones and drops its connection's
    /// sender, and the lock is needed only when the last one goes (to wake the receiver). That
    /// last sender takes the lock after counting down, and the receiver reads the count under
    /// it, so the receiver either sees no sender left or is woken.
    senders: AtomicUsize,
}

type Shared<T> = Arc<Queue<T>>;

fn lock<T>(shared: &Shared<T>) -> MutexGuard<'_, State<T>> {
    // No code path panics while holding the lock (only moves and wakes happen under it), and
    // the state stays consistent at every point, so a poisoned lock is still usable.
    shared.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// A queue holding at most `capacity` items (at least 1).
pub(crate) fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Queue {
        state: Mutex::new(State {
            items: VecDeque::new(),
            capacity: capacity.max(1),
            receiver_alive: true,
            receiver: None,
            waiting: Vec::new(),
        }),
        senders: AtomicUsize::new(1),
    });
    (Sender { shared: shared.clone() }, Receiver { shared })
}

/// The sending side; clone it for more senders.
pub struct Sender<T> {
    shared: Shared<T>,
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("queue::Sender").finish_non_exhaustive()
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender { shared: self.shared.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let wake = lock(&self.shared).receiver.take();
        if let Some(w) = wake {
            w.wake();
        }
    }
}

impl<T> Sender<T> {
    /// Queues `item`, waiting while the queue is full; gives it back when the receiver is gone.
    pub async fn send(&self, item: T) -> Result<(), T> {
        let mut item = Some(item);
        std::future::poll_fn(|cx| self.poll_send(cx, &mut item)).await
    }

    /// Queues `item` if there is room now: `Ok(true)` queued, `Ok(false)` the receiver is gone
    /// (the item is dropped), `Err(item)` the queue is full.
    pub fn try_send(&self, item: T) -> Result<bool, T> {
        let mut s = lock(&self.shared);
        if !s.receiver_alive {
            return Ok(false);
        }
        if s.items.len() >= s.capacity {
            return Err(item);
        }
        s.items.push_back(item);
        let wake = s.receiver.take();
        drop(s);
        if let Some(w) = wake {
            w.wake();
        }
        Ok(true)
    }

    /// True when the queue holds `capacity` items now: a send would wait.
    #[cfg(feature = "stdio")]
    pub(crate) fn is_full(&self) -> bool {
        let s = lock(&self.shared);
        s.items.len() >= s.capacity
    }

    fn poll_send(&self, cx: &mut Context<'_>, item: &mut Option<T>) -> Poll<Result<(), T>> {
        let mut s = lock(&self.shared);
        // `item` is only taken on the way to `Ready`, and a finished `poll_fn` is never polled.
        let Some(it) = item.take() else { return Poll::Ready(Ok(())) };
        if !s.receiver_alive {
            return Poll::Ready(Err(it));
        }
        if s.items.len() >= s.capacity {
            *item = Some(it);
            if !s.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                s.waiting.push(cx.waker().clone());
            }
            return Poll::Pending;
        }
        s.items.push_back(it);
        let wake = s.receiver.take();
        drop(s);
        if let Some(w) = wake {
            w.wake();
        }
        Poll::Ready(Ok(()))
    }
}

/// The receiving side.
pub struct Receiver<T> {
    shared: Shared<T>,
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("queue::Receiver").finish_non_exhaustive()
    }
}

impl<T> Receiver<T> {
    /// The next item; `None` once every sender is gone and nothing is left.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut s = lock(&self.shared);
        if let Some(it) = s.items.pop_front() {
            let waiting = std::mem::take(&mut s.waiting);
            drop(s);
            waiting.into_iter().for_each(Waker::wake);
            return Poll::Ready(Some(it));
        }
        if self.shared.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        if !s.receiver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            s.receiver = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Forgets the waker registered by the last pending [`poll_recv`](Self::poll_recv), so that
    /// sends do not wake it. For a receiver polled in the same task as (and right after) the
    /// code that sends: without this, each such send would wake the task for a second, empty
    /// poll. Call `poll_recv` afterwards in the same poll, which sees what was sent meanwhile.
    #[cfg(any(feature = "http", test))]
    pub(crate) fn unpark(&mut self) {
        lock(&self.shared).receiver = None;
    }

    /// Waits for the next item; `None` once every sender is gone and nothing is left.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// True when nothing is queued now.
    pub fn is_empty(&self) -> bool {
        lock(&self.shared).items.is_empty()
    }

    /// An item already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        let mut s = lock(&self.shared);
        let it = s.items.pop_front()?;
        let waiting = std::mem::take(&mut s.waiting);
        drop(s);
        waiting.into_iter().for_each(Waker::wake);
        Some(it)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let (items, waiting) = {
            let mut s = lock(&self.shared);
            s.receiver_alive = false;
            s.receiver = None;
            (std::mem::take(&mut s.items), std::mem::take(&mut s.waiting))
        };
        // Dropped outside the lock: an item's destructor may do anything.
        drop(items);
        waiting.into_iter().for_each(Waker::wake);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn items_arrive_in_order_and_recv_ends_when_every_sender_is_gone() {
        let (tx, mut rx) = channel(4);
        let tx2 = tx.clone();
        tx.send(1).await.expect("open");
        tx2.send(2).await.expect("open");
        assert_eq!(rx.try_recv(), Some(1));
        drop(tx);
        assert_eq!(rx.recv().await, Some(2));
        assert!(rx.try_recv().is_none());
        let waiter = tokio::spawn(async move { rx.recv().await });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(tx2);
        assert_eq!(waiter.await.expect("no panic"), None);
    }

    #[tokio::test]
    async fn a_full_queue_holds_the_sender_until_an_item_is_taken() {
        let (tx, mut rx) = channel(1);
        tx.send(1).await.expect("open");
        let blocked = tokio::spawn(async move { tx.send(2).await.map_err(|_| "closed") });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!blocked.is_finished(), "the second send waits for room");
        assert_eq!(rx.recv().await, Some(1));
        blocked.await.expect("no panic").expect("room was made");
        assert_eq!(rx.recv().await, Some(2));
    }

    #[tokio::test]
    async fn try_send_says_full_or_gone_without_waiting() {
        let (tx, rx) = channel(1);
        assert_eq!(tx.try_send(1), Ok(true));
        assert_eq!(tx.try_send(2), Err(2), "full: the item comes back");
        drop(rx);
        assert_eq!(tx.try_send(3), Ok(false), "receiver gone");
    }

    #[tokio::test]
    async fn senders_learn_that_the_receiver_is_gone() {
        let (tx, rx) = channel(1);
        tx.send(1).await.expect("open");
        let blocked = {
            let tx = tx.clone();
            tokio::spawn(async move { tx.send(2).await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(rx);
        assert_eq!(blocked.await.expect("no panic"), Err(2), "a waiting send gets its item back");
        assert_eq!(tx.send(3).await, Err(3));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn senders_on_other_threads_blocked_on_a_full_queue_all_get_through() {
        const THREADS: usize = 4;
        const EACH: usize = 2_000;
        let (tx, mut rx) = channel::<usize>(1);
        for t in 0..THREADS {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    futures::executor::block_on(tx.send(t * EACH + i)).expect("open");
                }
            });
        }
        drop(tx);
        // The receiver as the SSE body polls it: forget the waker, then poll.
        let received = tokio::time::timeout(Duration::from_secs(20), async move {
            let mut seen = vec![false; THREADS * EACH];
            while let Some(n) = std::future::poll_fn(|cx| {
                rx.unpark();
                rx.poll_recv(cx)
            })
            .await
            {
                assert!(!std::mem::replace(&mut seen[n], true), "{n} twice");
            }
            seen
        })
        .await
        .expect("no sender or receiver is left waiting");
        assert!(received.iter().all(|&s| s), "every item arrived");
    }

    #[tokio::test]
    async fn a_receiver_waiting_on_an_empty_queue_is_woken_by_a_send() {
        let (tx, mut rx) = channel::<u8>(2);
        let waiter = tokio::spawn(async move { rx.recv().await });
        tokio::time::sleep(Duration::from_millis(10)).await;
        tx.send(7).await.expect("open");
        assert_eq!(waiter.await.expect("no panic"), Some(7));
    }

    /// Senders cloned and dropped on other threads while the receiver waits: the receiver ends
    /// once the last one goes, whichever thread drops it and whenever the receiver looks.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_last_sender_dropped_on_any_thread_ends_the_receiver() {
        for round in 0..200 {
            let (tx, mut rx) = channel::<u8>(4);
            let senders: Vec<_> = (0..4).map(|_| tx.clone()).collect();
            drop(tx);
            let waiter = tokio::spawn(async move { rx.recv().await });
            if round % 2 == 0 {
                // Half the rounds give the receiver time to be waiting before the drops start;
                // the others race it against them.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let droppers: Vec<_> = senders
                .into_iter()
                .map(|tx| {
                    tokio::spawn(async move {
                        let more: Vec<_> = (0..8).map(|_| tx.clone()).collect();
                        tokio::task::yield_now().await;
                        drop(more);
                        drop(tx);
                    })
                })
                .collect();
            for d in droppers {
                d.await.expect("no panic");
            }
            let ended = tokio::time::timeout(Duration::from_secs(10), waiter).await;
            assert_eq!(ended.expect("the receiver was never woken").expect("no panic"), None);
        }
    }
}
