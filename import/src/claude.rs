//! claude sessions (to come).

use crate::builder::Builder;
use crate::{Head, ImportError, Source};

pub(crate) fn head(_src: &Source) -> Option<Head> {
    None
}

pub(crate) fn import(_src: &Source, _b: &mut Builder) -> Result<(), ImportError> {
    Ok(())
}
