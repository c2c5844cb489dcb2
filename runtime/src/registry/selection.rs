//! Which `inventory` registrations a server is built from: every group, or the groups named
//! with `ServerBuilder::groups`. Each kind of registration is read through [`Groups::select`],
//! so a new kind needs one [`Registration`] impl and no selection of its own.

/// A registration that `inventory` collects, tagged with its registration group.
pub(crate) trait Registration: inventory::Collect {
    /// The group it was declared in (`group = ".."` of its attribute; `"default"` otherwise).
    fn group(&self) -> &'static str;
}

/// Implements [`Registration`] for registration structs with a `group: &'static str` field.
macro_rules! registrations {
    ($($ty:ty),+ $(,)?) => {$(
        impl $crate::registry::Registration for $ty {
            fn group(&self) -> &'static str {
                self.group
            }
        }
    )+};
}
pub(crate) use registrations;

/// The registration groups a server is built from: `None` for every group.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Groups<'a>(Option<&'a [String]>);

impl<'a> Groups<'a> {
    pub(crate) fn new(groups: Option<&'a [String]>) -> Self {
        Groups(groups)
    }

    /// Whether registrations of `group` are selected.
    pub(crate) fn contains(self, group: &str) -> bool {
        self.0.is_none_or(|g| g.iter().any(|x| x == group))
    }

    /// The registrations of kind `R` in the selected groups, in `inventory`'s order (which is
    /// none in particular: callers sort or key what they collect).
    pub(crate) fn select<R: Registration>(self) -> impl Iterator<Item = &'static R> + 'a {
        inventory::iter::<R>.into_iter().filter(move |r| self.contains(r.group()))
    }
}
