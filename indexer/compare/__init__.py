"""The comparison core: what one article brings to a comparison (``sides``), the evidence two
sides give (``evidence``), the hard guards and the verdict (``rules``), the event specifics
(``specifics``) and the learned decision (``model``). Pure: no store, no threads, no model loading."""
