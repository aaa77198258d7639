//! # pgraphrag-metrics
//!
//! Metrics identical to the Python references: rouge-score ROUGE, NLTK METEOR, sacreBLEU, MAE/RMSE, accuracy/F1, Recall@k, bootstrap intervals.
#![deny(missing_docs)]
