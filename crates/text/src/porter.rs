//! NLTK's Porter stemmer (`PorterStemmer.NLTK_EXTENSIONS` mode), as rouge-score and METEOR use it.
